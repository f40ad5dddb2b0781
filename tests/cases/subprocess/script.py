import forge
try:
    import subprocess
    subprocess.run(['ls'])
    forge.result('ran')
except (ImportError, OSError, RuntimeError, AttributeError):
    forge.result('refused')
