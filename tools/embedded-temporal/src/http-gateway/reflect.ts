/**
 * The slice of protobufjs reflection the HTTP gateway reads, typed here (the SDK's compiled root
 * is a reflection root: src/rpc/grpc.ts reads its services the same way). Nothing is resolved
 * up front: a field's type is resolved the first time the gateway meets it, so a server started
 * without the HTTP port pays nothing.
 */
import protoRoot = require('@temporalio/proto/protos/root');

export interface RField {
  name: string;
  type: string;
  repeated: boolean;
  map: boolean;
  /** Map fields only. */
  keyType?: string;
  resolvedType: RType | REnum | null;
  /** The oneof holding the field (proto3 `optional` fields have a synthetic one): explicit presence. */
  partOf: object | null;
  resolved: boolean;
  resolve(): unknown;
}

export interface RType {
  fullName: string;
  fieldsArray: RField[];
  encode(message: object): { finish(): Uint8Array };
  decode(bytes: Uint8Array): object;
  fromObject(object: Record<string, unknown>): object;
}

export interface REnum {
  fullName: string;
  values: Record<string, number>;
  valuesById: Record<number, string>;
}

export interface RMethod {
  name: string;
  requestType: string;
  responseType: string;
  requestStream?: boolean;
  responseStream?: boolean;
  parsedOptions?: Record<string, unknown>[] | null;
  resolvedRequestType: RType | null;
  resolvedResponseType: RType | null;
}

export interface RService {
  fullName: string;
  methods: Record<string, RMethod>;
  resolveAll(): RService;
}

interface RRoot {
  lookupService(path: string): RService;
  lookup(path: string): unknown;
}

export const root = protoRoot as unknown as RRoot;

export function isEnum(t: RType | REnum | null): t is REnum {
  return t !== null && 'valuesById' in t;
}

export function isType(t: RType | REnum | null): t is RType {
  return t !== null && 'fieldsArray' in t;
}

/** The field's message or enum type, resolved on first use. */
export function fieldType(f: RField): RType | REnum | null {
  if (!f.resolved) f.resolve();
  return f.resolvedType;
}

/** A message type by full name (`temporal.api.common.v1.Payload`), or null. */
export function lookupType(fullName: string): RType | null {
  try {
    const t = root.lookup(fullName.replace(/^\./, '')) as RType | REnum | null;
    return isType(t) ? t : null;
  } catch {
    return null;
  }
}

/**
 * protobufjs names fields in lowerCamelCase (its `util.camelCase`: an underscore followed by a
 * letter becomes that letter upper-cased), which is also the proto3 JSON name. Path templates
 * and query parameters name fields as in the .proto (snake_case); this maps them over.
 */
export function camelCase(protoName: string): string {
  return protoName.replace(/_([a-zA-Z])/g, (_m, c: string) => c.toUpperCase());
}

/** The field of `type` called `name` in the .proto spelling or the JSON (lowerCamelCase) one. */
export function fieldNamed(type: RType, name: string): RField | undefined {
  const camel = camelCase(name);
  return type.fieldsArray.find((f) => f.name === name || f.name === camel);
}
