/* speedscope-check FILE...: each file checked against speedscope's own JSON
 * schema for its file format (the schema the speedscope npm package ships),
 * with Ajv. Exit 0 when every file is valid; else the errors and 1. */
'use strict';
const path = require('path');
const fs = require('fs');
const Ajv = require(path.join(__dirname, 'node_modules', 'ajv'));

const schemaPath = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release',
  'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
/* the schema's root is a $ref into its definitions */
const validate = ajv.compile(schema);
let bad = 0;
for (const file of process.argv.slice(2)) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (validate(doc)) {
    console.log('ok: ' + file + ' is a speedscope file (' + doc.profiles.length + ' profiles)');
  } else {
    bad++;
    console.log('FAIL: ' + file + ': ' + ajv.errorsText(validate.errors, { separator: '\n  ' }));
  }
}
process.exit(bad ? 1 : 0);
