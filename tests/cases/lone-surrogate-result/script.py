import forge
forge.result('a\ud800b')
