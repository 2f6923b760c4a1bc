declare module 'dynalite';
