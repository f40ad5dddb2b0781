tools.sleep({ms: 60000});
throw new Error('gone');
