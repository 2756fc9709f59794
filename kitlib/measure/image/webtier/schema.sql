-- Social events schema (CloudStone/Olio style). Load into an empty database: mariadb <db> < schema.sql
SET foreign_key_checks = 0;
DROP TABLE IF EXISTS attendance, event_tag, event, tag, person;
SET foreign_key_checks = 1;

CREATE TABLE person (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT,
  name VARCHAR(100) NOT NULL,
  email VARCHAR(190) NOT NULL,
  salt CHAR(16) NOT NULL,
  password CHAR(64) NOT NULL,            -- sha256 hex of salt + password
  PRIMARY KEY (id),
  UNIQUE KEY person_email (email)        -- Login, and 409 on a duplicate AddPerson
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE tag (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT,
  name VARCHAR(50) NOT NULL,
  refcount INT UNSIGNED NOT NULL DEFAULT 0,  -- events carrying the tag: HomePage's top tags without a GROUP BY
  PRIMARY KEY (id),
  UNIQUE KEY tag_name (name)             -- TagSearch, and AddEvent's upsert
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE event (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT,
  person_id INT UNSIGNED NOT NULL,       -- the submitter
  title VARCHAR(200) NOT NULL,
  description TEXT NOT NULL,
  event_date DATE NOT NULL,
  PRIMARY KEY (id),
  KEY event_by_date (event_date, id),    -- HomePage's next events
  KEY event_by_person (person_id),
  CONSTRAINT event_person FOREIGN KEY (person_id) REFERENCES person (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE event_tag (
  event_id INT UNSIGNED NOT NULL,
  tag_id INT UNSIGNED NOT NULL,
  PRIMARY KEY (event_id, tag_id),        -- an event's tags
  KEY tag_events (tag_id, event_id),     -- a tag's events (TagSearch)
  CONSTRAINT event_tag_event FOREIGN KEY (event_id) REFERENCES event (id),
  CONSTRAINT event_tag_tag FOREIGN KEY (tag_id) REFERENCES tag (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE attendance (
  event_id INT UNSIGNED NOT NULL,
  person_id INT UNSIGNED NOT NULL,
  PRIMARY KEY (event_id, person_id),     -- an event's attendees
  KEY person_events (person_id, event_id),  -- a person's events
  CONSTRAINT attendance_event FOREIGN KEY (event_id) REFERENCES event (id),
  CONSTRAINT attendance_person FOREIGN KEY (person_id) REFERENCES person (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
