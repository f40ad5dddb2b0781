import forge
forge.result([float('nan'), float('inf'), float('-inf')])
