try { await import("os"); return "loaded"; } catch (e) { return "refused"; }
