import { eventRetention } from "./EventRetention.ts"

eventRetention("memory", false)
