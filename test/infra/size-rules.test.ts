/**
 * Size rules of issue 12 (STYLE.md): no file in src/ over 400 lines, no function
 * over 60 lines outside declarative tables. Functions are measured with the
 * TypeScript compiler API on the .ts sources.
 *
 * How a function is measured: every function declaration, function expression,
 * arrow function, method, constructor and accessor is measured on its own, from
 * the first line of its code (leading comments excluded) to its closing line,
 * code nested in it included, except the inner lines of declarative tables.
 *
 * How a declarative table is decided: an object literal with at least two
 * entries, every entry a method, an accessor, a shorthand property or a property
 * whose value is a function, a literal (string, number, boolean, null, regular
 * expression, template without substitutions), a name (`x`, `Codes.X`) or again
 * such a literal; or an array literal of at least two such values. A table's
 * first line stays counted; its other lines do not count toward the function
 * that contains it, but every function inside the table is measured by itself.
 * So a function that returns a table of method handlers is as long as its own
 * code, and each handler is held to 60 lines.
 *
 * Tables whose values are built by calls (`name: method({ params: z.object(…), call })`)
 * are not recognised by shape: such a function is named in TABLE_FUNCTIONS below,
 * and the test holds it to being exactly `return { … }` of an object literal, or
 * `return f({ … })` of one handed whole to a single call (else
 * it fails, as it does for a name that no longer exists); its literal is then not
 * counted and each function inside is measured by itself.
 */
import { strict as assert } from 'node:assert'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const MAX_FILE_LINES = 400
const MAX_FUNCTION_LINES = 60
const MIN_TABLE_ENTRIES = 2

/** `path#function` of functions that only return a table of control methods; keep this list short. */
const TABLE_FUNCTIONS: readonly string[] = [
  'src/host/api.ts#controlMethods'
]

function tsFiles (dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...tsFiles(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(path)
  }
  return found.sort()
}

/** Lines as `wc -l` and editors count them: a final newline ends the last line. */
export function lineCount (text: string): number {
  if (text.length === 0) return 0
  const newlines = text.split('\n').length - 1
  return text.endsWith('\n') ? newlines : newlines + 1
}

function isFunctionLike (node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)) && node.body !== undefined
}

function unwrap (node: ts.Expression): ts.Expression {
  let e = node
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression
  return e
}

function isTableValue (node: ts.Expression): boolean {
  const e = unwrap(node)
  if (ts.isArrowFunction(e) || ts.isFunctionExpression(e)) return true
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isNumericLiteral(e) ||
    ts.isBigIntLiteral(e) || ts.isRegularExpressionLiteral(e)) return true
  if (e.kind === ts.SyntaxKind.TrueKeyword || e.kind === ts.SyntaxKind.FalseKeyword ||
    e.kind === ts.SyntaxKind.NullKeyword) return true
  if (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand)) return true
  if (isName(e)) return true
  return isTable(e, 0)
}

function isName (e: ts.Expression): boolean {
  return ts.isIdentifier(e) || (ts.isPropertyAccessExpression(e) && isName(e.expression))
}

function isTableEntry (p: ts.ObjectLiteralElementLike): boolean {
  if (ts.isMethodDeclaration(p) || ts.isGetAccessorDeclaration(p) || ts.isSetAccessorDeclaration(p)) return true
  if (ts.isShorthandPropertyAssignment(p)) return true
  return ts.isPropertyAssignment(p) && isTableValue(p.initializer)
}

/** True for an object or array literal that only declares (see the header). */
export function isTable (node: ts.Node, minEntries = MIN_TABLE_ENTRIES): boolean {
  if (ts.isObjectLiteralExpression(node)) {
    return node.properties.length >= minEntries && node.properties.every(isTableEntry)
  }
  if (ts.isArrayLiteralExpression(node)) {
    return node.elements.length >= minEntries && node.elements.every(isTableValue)
  }
  return false
}

interface Span { first: number, last: number }

function spanOf (node: ts.Node, sf: ts.SourceFile): Span {
  return {
    first: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line,
    last: sf.getLineAndCharacterOfPosition(node.getEnd()).line
  }
}

/** The object literal `fn` returns when its whole body is `return { … }`, `return f({ … })` (or `=> ({ … })`). */
export function returnedLiteral (fn: ts.FunctionLikeDeclaration): ts.ObjectLiteralExpression | undefined {
  const body = fn.body
  if (body === undefined) return undefined
  let e: ts.Expression | undefined
  if (ts.isBlock(body)) {
    const only = body.statements.length === 1 ? body.statements[0] : undefined
    e = only !== undefined && ts.isReturnStatement(only) ? only.expression : undefined
  } else {
    e = body
  }
  let literal = e === undefined ? undefined : unwrap(e)
  // `return implement({ … })`: a table handed whole to one call is still the table
  if (literal !== undefined && ts.isCallExpression(literal) && literal.arguments.length === 1) literal = unwrap(literal.arguments[0])
  return literal !== undefined && ts.isObjectLiteralExpression(literal) ? literal : undefined
}

/** Lines of `fn` that count: its span minus the inner lines of tables inside it. */
function functionLines (fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile, listed: boolean): number {
  const own = spanOf(fn, sf)
  const excluded = new Set<number>()
  const table = listed ? returnedLiteral(fn) : undefined
  const visit = (node: ts.Node): void => {
    if (node === table || isTable(node)) {
      const t = spanOf(node, sf)
      for (let line = t.first + 1; line <= t.last; line++) excluded.add(line)
      return
    }
    ts.forEachChild(node, visit)
  }
  if (fn.body !== undefined) ts.forEachChild(fn.body, visit)
  return own.last - own.first + 1 - excluded.size
}

function functionName (fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (fn.name !== undefined) return fn.name.getText(sf)
  if (ts.isConstructorDeclaration(fn)) return 'constructor'
  const parent = fn.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.name !== undefined) return parent.name.getText(sf)
  return '(anonymous)'
}

interface Measured { where: string, lines: number }

/**
 * Functions of one file over `max` lines. `tables` holds the `path#name` entries of
 * TABLE_FUNCTIONS; each one found here is removed from it, and one that is not a
 * single returned object literal is reported with lines = -1.
 */
export function longFunctions (path: string, text: string, tables = new Set<string>(), max = MAX_FUNCTION_LINES): Measured[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Measured[] = []
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node)) {
      const key = `${path}#${functionName(node, sf)}`
      const listed = tables.delete(key)
      const where = `${path}:${spanOf(node, sf).first + 1} ${functionName(node, sf)}`
      if (listed && returnedLiteral(node) === undefined) found.push({ where, lines: -1 })
      const lines = functionLines(node, sf, listed)
      if (lines > max) found.push({ where, lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return found
}

describe('infra - size rules (src/)', () => {
  const files = tsFiles(join(ROOT, 'src')).map((path) => ({
    path: relative(ROOT, path), text: readFileSync(path, 'utf8')
  }))

  it('finds the sources', () => {
    assert.ok(files.length > 50, `only ${files.length} .ts files under src/`)
  })

  it(`no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files.map((f) => ({ path: f.path, lines: lineCount(f.text) }))
      .filter((f) => f.lines > MAX_FILE_LINES).map((f) => `${f.path}: ${f.lines} lines`)
    if (long.length > 0) assert.fail(`${long.length} file(s) over ${MAX_FILE_LINES} lines:\n  ${long.join('\n  ')}`)
  })

  it(`no function over ${MAX_FUNCTION_LINES} lines outside declarative tables`, () => {
    const tables = new Set(TABLE_FUNCTIONS)
    const long = files.flatMap((f) => longFunctions(f.path, f.text, tables)).map((m) => m.lines < 0
      ? `${m.where}: in TABLE_FUNCTIONS but its body is not one returned object literal`
      : `${m.where}: ${m.lines} lines`)
    long.push(...[...tables].map((key) => `${key}: in TABLE_FUNCTIONS but no such function in src/`))
    if (long.length > 0) assert.fail(`${long.length} function(s) over ${MAX_FUNCTION_LINES} lines:\n  ${long.join('\n  ')}`)
  })
})

describe('infra - size rules measure what they say', () => {
  const body = (n: number): string => Array.from({ length: n }, (_, i) => `  const v${i} = ${i}`).join('\n')

  it('counts lines like wc -l', () => {
    assert.equal(lineCount(''), 0)
    assert.equal(lineCount('a\nb\n'), 2)
    assert.equal(lineCount('a\nb'), 2)
  })

  it('a function of 61 lines fails, one of 60 passes, leading comments not counted', () => {
    const at60 = `// comment\n// comment\nfunction f () {\n${body(58)}\n}\n`
    const at61 = `function g () {\n${body(59)}\n}\n`
    assert.deepEqual(longFunctions('x.ts', at60), [])
    assert.deepEqual(longFunctions('x.ts', at61), [{ where: 'x.ts:1 g', lines: 61 }])
  })

  it('measures methods, arrows and nested functions, each by name', () => {
    const src = `class C {\n  m () {\n${body(60)}\n  }\n}\nconst h = () => {\n  const inner = function () {\n${body(60)}\n  }\n}\n`
    assert.deepEqual(longFunctions('x.ts', src).map((m) => m.where), ['x.ts:2 m', 'x.ts:65 h', 'x.ts:66 inner'])
  })

  it('a table of handlers does not count toward its function, but each handler does', () => {
    const handler = (name: string, n: number): string => `    ${name} () {\n${body(n)}\n    },`
    const table = `function methods () {\n  return {\n${handler('a', 40)}\n${handler('b', 40)}\n    c: 'x',\n    d: 1\n  }\n}\n`
    assert.deepEqual(longFunctions('x.ts', table), [])
    const big = `function methods () {\n  return {\n${handler('a', 70)}\n${handler('b', 1)}\n  }\n}\n`
    assert.deepEqual(longFunctions('x.ts', big).map((m) => m.where), ['x.ts:3 a'])
  })

  it('a listed table function is measured without its literal, but only if it is one', () => {
    const entries = Array.from({ length: 70 }, (_, i) => `    k${i}: g(${i}),`).join('\n')
    const src = `function f () {\n  return {\n${entries}\n    h () { return 1 }\n  }\n}\n`
    assert.deepEqual(longFunctions('x.ts', src, new Set(['x.ts#f'])), [])
    const notTable = `function f () {\n  const t = {\n${entries}\n  }\n  return t\n}\n`
    assert.deepEqual(longFunctions('x.ts', notTable, new Set(['x.ts#f'])).map((m) => m.lines), [-1, 75])
  })

  it('an object with a computed value is code, not a table', () => {
    const src = `function f () {\n  return {\n${Array.from({ length: 60 }, (_, i) => `    k${i}: g(${i}),`).join('\n')}\n  }\n}\n`
    assert.equal(longFunctions('x.ts', src).length, 1)
  })
})
