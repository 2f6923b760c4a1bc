// Runs after `npm ci` / `npm install` (the `postinstall` script). On Node 20, npm warns with EBADENGINE about the
// dependencies that want Node 22; say once why that is harmless here, instead of leaving a wall of warnings.
// The script itself may run on the project's Node 22 (node_modules/.bin comes first on PATH): npm's user agent names
// the Node that npm, and so the install, ran on.
const npmNode = /node\/v(\d+)[.\d]*/.exec(process.env.npm_config_user_agent ?? '');
const major = Number(npmNode?.[1] ?? process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(
    `wecom-gateway: the EBADENGINE warnings above are expected on Node ${npmNode?.[0].slice(5) ?? process.versions.node}: those dependencies want Node 22, and every npm script here (npm start, npm test, npx wecom-gateway) runs on the Node 22 the project installs (devDependency "node").\n`,
  );
}
