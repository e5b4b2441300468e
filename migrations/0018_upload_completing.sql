-- A completion claims its upload (completing_since) while it assembles the
-- parts and reads the file outside any transaction; the expiry job leaves
-- an upload claimed lately alone, and deletes the assembled file of one
-- whose completion never finished.
ALTER TABLE uploads ADD COLUMN completing_since timestamptz;
