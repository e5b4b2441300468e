package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"creativeapi/internal/store"
)

// TestEveryAdvisoryLockKeyInTheQueriesIsANamedOne: a key the SQL writes
// as a literal is one of store's named lock constants, and the keys of
// the block are all different, so a new lock cannot silently take an
// existing one's key.
func TestEveryAdvisoryLockKeyInTheQueriesIsANamedOne(t *testing.T) {
	named := map[int64]string{
		store.LockMigrations:              "LockMigrations",
		store.LockChainWatcher:            "LockChainWatcher",
		store.LockOutboxPublish:           "LockOutboxPublish",
		int64(store.LockDepositOwner):     "LockDepositOwner",
		int64(store.LockDepositSlot):      "LockDepositSlot",
		int64(store.LockEmailRecipient):   "LockEmailRecipient",
		int64(store.LockEmailSender):      "LockEmailSender",
		int64(store.LockDepositClaimer):   "LockDepositClaimer",
		int64(store.LockAccessTokenOwner): "LockAccessTokenOwner",
		int64(store.LockWebhookEndpoint):  "LockWebhookEndpoint",
	}
	if len(named) != 10 {
		t.Fatalf("two lock constants share a key: %v", named)
	}
	files, err := filepath.Glob("../../queries/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no queries found: %v", err)
	}
	call := regexp.MustCompile(`pg_(?:try_)?advisory_(?:xact_)?lock(?:_shared)?\(\s*([^,)\s]+)`)
	seen := 0
	for _, f := range files {
		sql, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllSubmatch(sql, -1) {
			key := string(m[1])
			n, err := strconv.ParseInt(key, 10, 64)
			if err != nil {
				// A computed key: the literal it starts from must be named.
				lead := regexp.MustCompile(`^\d+`).FindString(key)
				if n, err = strconv.ParseInt(lead, 10, 64); err != nil {
					t.Errorf("%s: advisory lock key %q is neither a literal nor one plus an offset", f, key)
					continue
				}
			}
			seen++
			if _, ok := named[n]; !ok {
				t.Errorf("%s: advisory lock key %d is not one of store's named lock constants", f, n)
			}
		}
	}
	if seen == 0 {
		t.Fatal("found no advisory lock in the queries: the pattern no longer matches them")
	}
}
