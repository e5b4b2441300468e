-- Personal access tokens (docs/tokens.md): a user's backend calls the API
-- with one instead of a session. Only a SHA-256 hash of the token is
-- stored; scopes bound what it may do beside the user's own rights.
CREATE TABLE access_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    scopes       text[] NOT NULL CHECK (cardinality(scopes) > 0),
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);

CREATE INDEX access_tokens_user_id_idx ON access_tokens (user_id, created_at DESC);
