/** Base of every model: snake_case columns in PostgreSQL, camelCase properties in TypeScript. */
import { Model, snakeCaseMappers, type ColumnNameMappers } from 'objection';

export class BaseModel extends Model {
  static override get columnNameMappers(): ColumnNameMappers {
    return snakeCaseMappers();
  }
}
