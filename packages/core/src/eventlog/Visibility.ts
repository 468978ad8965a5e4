import { Effect, Schema } from "effect"
import * as Scopes from "../auth/Scopes.ts"
import { PermissionDenied } from "../Errors.ts"
import * as EventCatalog from "../EventCatalog.ts"

/**
 * Which event types a key may see, for every reader of the log (`GET /api/v1/events`,
 * `GET /api/v1/stream`): the types of the resources it may read (an event's `view`
 * permission), narrowed by a `type` filter. One rule, so the list and the stream never differ.
 */

/** The types a `type` item names: itself, or its family's (`lead.*`). */
export const typesMatching = (item: string): ReadonlyArray<string> =>
  item.endsWith(".*")
    ? EventCatalog.EVENT_TYPES.filter((type) => type.startsWith(item.slice(0, -1)))
    : EventCatalog.EVENT_TYPES.filter((type) => type === item)

/** A `type` parameter: event types or families separated by commas, each one known. */
export const TypeFilter = Schema.String.check(
  Schema.makeFilter(
    (value: string) =>
      value.split(",").every((type) => typesMatching(type).length > 0) ||
      "must be one or more event types (lead.updated) or families (lead.*), separated by commas"
  )
).annotate({
  description: "Only these types, separated by commas; `lead.*` is every type of a family"
})

/**
 * The types a key with these scopes sees, of those a `type` filter asks for (every visible one
 * without it). A key that sees none is refused naming the first resource's read scope (the
 * narrowest way in); a filter naming a type it may not see, naming that type's scope.
 */
export const visibleTypes = (
  scopes: ReadonlyArray<Scopes.Scope>,
  filter: string | undefined
): Effect.Effect<ReadonlyArray<string>, PermissionDenied> => {
  const visible = EventCatalog.definitions.filter((definition) => Scopes.allows(scopes, definition.view))
  if (visible.length === 0) {
    return Effect.fail(new PermissionDenied({ required: Scopes.requirementFor(EventCatalog.definitions[0]!.view) }))
  }
  const types = visible.map((definition) => definition.type)
  if (filter === undefined) return Effect.succeed(types)
  const asked = [...new Set(filter.split(",").flatMap(typesMatching))]
  const hidden = EventCatalog.definitions.find(
    (definition) => asked.includes(definition.type) && !types.includes(definition.type)
  )
  return hidden === undefined
    ? Effect.succeed(asked)
    : Effect.fail(new PermissionDenied({ required: Scopes.requirementFor(hidden.view) }))
}
