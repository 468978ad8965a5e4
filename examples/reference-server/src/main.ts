import { runMain, serve } from "@leadline/server"

// The whole reference server is the `@leadline/server` package; this example runs it as an app of
// your own would: configured from the environment, on the embedded database unless DATABASE_URL is set.
runMain(serve)
