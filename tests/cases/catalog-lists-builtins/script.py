import forge
kind = lambda v: {dict: "object", str: "string"}.get(type(v), type(v).__name__)
forge.result([[t["name"], t["effect"], kind(t["input_schema"]), kind(t["description"])] for t in forge.tools()])
