import * as Resource from "./Resource.ts"

/**
 * The checks that make coverage follow from construction: an operation of the
 * API, a table of the database or a resource that the descriptors leave out is
 * named here, so the coverage tests fail on it instead of the generated tests
 * silently covering less.
 */

const METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"]

/** `METHOD /path` of every operation of an OpenAPI document, sorted. */
export const documentedRoutes = (document: {
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>
}): ReadonlyArray<string> =>
  Object.entries(document.paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`)
    )
    .sort()

export interface RouteGaps {
  /** Documented operations that no descriptor declares (a resource without a descriptor shows here). */
  readonly undeclared: ReadonlyArray<string>
  /** Declared routes that the document does not have (a typo, or a route that went away). */
  readonly undocumented: ReadonlyArray<string>
  /** Routes that two descriptors declare. */
  readonly duplicated: ReadonlyArray<string>
}

export const routeGaps = (
  documented: ReadonlyArray<string>,
  resources: ReadonlyArray<Resource.Resource>
): RouteGaps => {
  const declared = resources.flatMap((resource) => resource.routes.map(Resource.routeName))
  const declaredSet = new Set(declared)
  const documentedSet = new Set(documented)
  return {
    undeclared: documented.filter((route) => !declaredSet.has(route)),
    undocumented: declared.filter((route) => !documentedSet.has(route)),
    duplicated: [...new Set(declared.filter((route, index) => declared.indexOf(route) !== index))]
  }
}

/** A table that no account owns, so the fuzz ledger need not count it. */
export interface GlobalTable {
  readonly table: string
  readonly reason: string
}

export interface TableGaps {
  /** Tables of the database that no descriptor's ledger names and no exemption lists. */
  readonly unledgered: ReadonlyArray<string>
  /** Tables a ledger or an exemption names that the database does not have. */
  readonly unknown: ReadonlyArray<string>
  /** Tables that two ledgers (or a ledger and an exemption) name. */
  readonly duplicated: ReadonlyArray<string>
}

export const tableGaps = (
  tables: ReadonlyArray<string>,
  resources: ReadonlyArray<Resource.Resource>,
  globalTables: ReadonlyArray<GlobalTable>,
  bookkeeping: ReadonlyArray<string>
): TableGaps => {
  const named = [
    ...resources.flatMap((resource) => resource.ledger.tables.map((table) => table.name)),
    ...globalTables.map((global) => global.table)
  ]
  const namedSet = new Set(named)
  const present = tables.filter((table) => !bookkeeping.includes(table))
  return {
    unledgered: present.filter((table) => !namedSet.has(table)).sort(),
    unknown: named.filter((table) => !present.includes(table)).sort(),
    duplicated: [...new Set(named.filter((table, index) => named.indexOf(table) !== index))].sort()
  }
}

/** The isolation cases generated for a resource: its addressed routes, and the reads that must not show the thing. */
export const isolationCases = (resource: Resource.Resource): ReadonlyArray<string> =>
  resource.routes
    .filter(Resource.isApiRoute)
    .flatMap((route) =>
      route.addresses !== undefined
        ? [`${Resource.routeName(route)} is 404`]
        : route.method === "GET"
          ? [`${Resource.routeName(route)} does not show it`]
          : []
    )

/** What is wrong with the descriptors' isolation: a missing case, an exemption an API key could get past, a case that checks nothing. */
export const isolationGaps = (resources: ReadonlyArray<Resource.Resource>): ReadonlyArray<string> =>
  resources.flatMap((resource): ReadonlyArray<string> => {
    const isolation = resource.isolation
    if (isolation === undefined) return [`${resource.name} has no isolation case`]
    if (Resource.isExempt(isolation)) {
      return resource.routes
        .filter(Resource.isApiRoute)
        .map(
          (route) =>
            `${resource.name} is exempt from isolation ("${isolation.exempt}"), but an API key reaches ${Resource.routeName(route)}`
        )
    }
    return isolationCases(resource).length === 0
      ? [`${resource.name}'s isolation case checks nothing: no API route addresses its things or reads them`]
      : []
  })

/**
 * Operations an API key reaches that take an id (any path parameter, or a query
 * parameter named `id`) but whose descriptor does not say how to address a thing:
 * the isolation cases would skip them.
 */
export const addressGaps = (
  document: { readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> },
  resources: ReadonlyArray<Resource.Resource>
): ReadonlyArray<string> => {
  const routes = new Map(
    resources.flatMap((resource) => resource.routes.map((route) => [Resource.routeName(route), route]))
  )
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) => {
      if (!METHODS.includes(method)) return []
      const name = `${method.toUpperCase()} ${path}`
      const route = routes.get(name)
      if (route === undefined || !Resource.isApiRoute(route) || route.addresses !== undefined) return []
      const parameters = (operation as { parameters?: ReadonlyArray<{ name: string; in: string }> }).parameters ?? []
      const takesId = parameters.some((p) => p.in === "path" || (p.in === "query" && p.name === "id"))
      return takesId ? [`${name} takes an id but its descriptor has no \`addresses\``] : []
    })
  )
}
