return 'a\ud800b';
