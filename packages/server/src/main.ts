import { runMain } from "./RunMain.ts"
import { serve } from "./Serve.ts"

// `leadline serve` without the CLI: the server's own entry point.
runMain(serve)
