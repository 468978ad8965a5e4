import { runMain } from "./RunMain.ts"
import { serve } from "./Serve.ts"

runMain(serve)
