/**
 * The package version (package.json `version`), in a module of its own so that whatever needs
 * only the version string (`npm run openapi`, `/v1/health`) does not load the runtime and every
 * AWS client with it. esbuild inlines the JSON import in the Lambda bundles.
 */
import pkg from "../package.json" with { type: "json" };

/** Semver of this build, e.g. `0.1.0`. */
export const VERSION: string = pkg.version;
