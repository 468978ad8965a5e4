/**
 * The Leadline server as a library: run it (`serve`, `work`, `migrate` under `runMain`), read its
 * configuration, or compose its routes and loops over a store wiring of your own (`Composition`,
 * as the testkit's test server does).
 */
export * as Composition from "./Composition.ts"
export { ServerConfig } from "./Config.ts"
export * as Deployment from "./Deployment.ts"
export { migrate } from "./Migrate.ts"
export { runMain } from "./RunMain.ts"
export { serve } from "./Serve.ts"
export { VERSION } from "./Version.ts"
export { work } from "./Work.ts"
