import forge
import _cxxtrap
print("before")
_cxxtrap.boom()
forge.result("not reached")
