import forge
try:
    import multiprocessing
    p = multiprocessing.Process(target=print)
    p.start()
    p.join()
    forge.result('started')
except Exception:
    forge.result('refused')
