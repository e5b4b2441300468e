package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"creativeapi/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// catalog lists every column, constraint, index, trigger and function of
// the public schema, except the migration bookkeeping table.
const catalog = `
SELECT 'col ' || table_name || '.' || column_name || ' #' || ordinal_position || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
UNION ALL
SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
UNION ALL
SELECT 'con ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'schema_migrations'
UNION ALL
SELECT 'trg ' || tgrelid::regclass || ' ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
UNION ALL
SELECT 'fn ' || proname || ' ' || md5(prosrc) FROM pg_proc WHERE pronamespace = 'public'::regnamespace
ORDER BY 1`

func TestMigrationsProduceExactlySchemaSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	migrated := testenv.NewDB(t) // cloned from the migrated template
	fromSchema := testenv.NewEmptyDB(t)
	schema, err := os.ReadFile("../../schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fromSchema.Pool.Exec(ctx, string(schema)); err != nil {
		t.Fatalf("apply schema.sql: %v", err)
	}
	want := rows(t, fromSchema)
	got := rows(t, migrated)
	if len(want) < 50 {
		t.Fatalf("catalog query found only %d objects", len(want))
	}
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Fatalf("first difference at %d:\n schema.sql:  %s\n migrations:  %s", i, w, g)
		}
	}
}

func rows(t *testing.T, d *testenv.DB) []string {
	t.Helper()
	rs, err := d.Pool.Query(context.Background(), catalog)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}
