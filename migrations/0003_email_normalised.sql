-- 0003_email_normalised: emails are stored in one form (auth.NormalizeEmail:
-- ASCII letters in lower case, nothing else folded), and lookup, uniqueness
-- and sign-in throttling compare that form. lower() also folded other
-- letters by the database's locale, so an address that was not the user's
-- (vİewer@…, with U+0130) signed in as them.
--
-- No two stored emails can meet here: the old unique index on lower(email)
-- already kept apart any two that differ only in ASCII case.
UPDATE users
SET email = translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
WHERE email <> translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');

DROP INDEX users_email_key;

ALTER TABLE users
    ADD CONSTRAINT users_email_key UNIQUE (email),
    ADD CONSTRAINT users_email_normalised
        CHECK (email = translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'));
