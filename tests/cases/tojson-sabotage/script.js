return { toJSON() { throw new Error('sabotage'); } };
