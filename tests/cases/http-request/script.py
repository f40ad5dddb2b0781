import forge
try:
    import urllib.request
    urllib.request.urlopen('http://127.0.0.1:9/', timeout=1).read()
    forge.result('fetched')
except Exception:
    forge.result('refused')
