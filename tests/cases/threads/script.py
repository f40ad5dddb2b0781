import forge
try:
    import threading
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    forge.result('ran')
except (ImportError, RuntimeError):
    forge.result('refused')
