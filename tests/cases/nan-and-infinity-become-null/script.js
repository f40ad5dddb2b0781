return [NaN, Infinity, -Infinity];
