import forge
import science_preload as s
forge.result({"imported": s.IMPORTED, "missing": s.MISSING})
