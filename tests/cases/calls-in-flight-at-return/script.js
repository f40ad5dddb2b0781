tools.sleep({ms: 60000});
tools.sleep({ms: 60000});
return 'returned';
