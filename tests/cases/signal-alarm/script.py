import forge
try:
    import signal
    signal.alarm(1)
    forge.result('armed')
except Exception:
    forge.result('refused')
