import { createRequire } from "node:module"

/** This server's version, from its package.json: `leadline_build_info` and the traces' `service.version`. */
export const VERSION: string = createRequire(import.meta.url)("../package.json").version
