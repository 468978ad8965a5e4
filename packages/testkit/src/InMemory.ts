import * as MemoryApp from "@leadline/memory-adapter/MemoryApp"

/**
 * The whole core over in-memory stores, ready for a test: provide it to an Effect that uses
 * Leadline's services (`Leads`, `Messages`, ...), or pass it as `app` to `TestServer.start`
 * (its default). Each `Layer.build` of it starts empty.
 */
export const layer = MemoryApp.layer
