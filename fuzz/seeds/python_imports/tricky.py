from . import x
# import hidden
s = "import fake"
if True: import a.b.c; from d import (e,
 f)
