import forge
import forge_profile as s
forge.result({"engine": s.ENGINE_ID, "packages": list(s.PACKAGES), "version": s.VERSION, "missing": s.MISSING})
