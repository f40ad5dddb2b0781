import re, forge
forge.result(bool(re.match(r'^(a+)+$', 'a' * 40 + 'b')))
