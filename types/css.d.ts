// Stylesheets imported by the browser apps (web/): esbuild bundles them into one CSS file per app.
declare module '*.css';
