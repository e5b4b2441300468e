-- Nobody approves their own work (docs/shares.md, "Who makes and sees
-- shares"): a decide share is an admin's. The audit log records changes
-- made to an organization by its people or by the service itself, one
-- append-only row each: who (actor_id; NULL for the service, as here),
-- what (action, target_type, target_id, target_name) and the details. It
-- has no foreign key to users: an entry outlives the person it names.
CREATE TABLE audit_log (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    action          text NOT NULL CHECK (action <> ''),
    actor_id        uuid,
    target_type     text NOT NULL CHECK (target_type <> ''),
    target_id       uuid NOT NULL,
    target_name     text,
    at              timestamptz NOT NULL DEFAULT now(),
    ip_address      inet,
    details         jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX audit_log_organization_idx ON audit_log (organization_id, at DESC, id DESC);

-- Entries are never changed; deleting is left to retention and to the
-- organization's own deletion.
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION forbid_change();

-- Every decide share made by someone who is not an admin of its
-- organization now becomes a comment share, revoked and expired ones too,
-- each with its audit entry: its guests keep reading and commenting, and
-- decide no more. A live guest session reads its share's permission on
-- every request, so it takes effect at once.
WITH narrowed AS (
    UPDATE shares s SET permission = 'comment'
    WHERE s.permission = 'decide'
      AND NOT EXISTS (SELECT 1 FROM memberships m
                      WHERE m.organization_id = s.organization_id AND m.user_id = s.created_by AND m.role = 'admin')
    RETURNING s.id, s.organization_id, s.created_by
)
INSERT INTO audit_log (organization_id, action, actor_id, target_type, target_id, details)
SELECT organization_id, 'share.permission_changed', NULL, 'share', id,
       jsonb_build_object('from', 'decide', 'to', 'comment', 'createdBy', created_by,
                          'reason', 'decide shares are made by admins only', 'migration', '0041_decide_shares_by_admins')
FROM narrowed;
