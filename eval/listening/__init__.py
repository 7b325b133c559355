"""The human listening test behind ``hear2act listen``.

``cli`` (the command and scoring report), ``data`` (clip manifest, annotators, answer files),
``server`` (the local web page and its HTTP API), ``stats`` (pure scoring: accuracy, Cohen's kappa).
"""
