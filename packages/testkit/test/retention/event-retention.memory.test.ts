import { STORES } from "../../src/TestDatabase.ts"
import { eventRetention } from "./EventRetention.ts"

eventRetention(STORES[0])
