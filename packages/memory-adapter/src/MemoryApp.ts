import { Layer } from "effect"
import * as Services from "@leadline/core/Services"
import * as MemoryStores from "./MemoryStores.ts"

/** The core services over in-memory stores: the whole domain, nothing to set up. */
export const layer = Services.layer.pipe(Layer.provideMerge(MemoryStores.layer))
