// tier: quick
import test from 'ava';
import { commandName } from '../../cli/command-name.js';
import { commandModules, COMMAND_MODULES } from '../../cli/command-table.js';

test('the named command is the first word that is not an option', (t) => {
  t.is(commandName(['apps', '--json']), 'apps');
  t.is(commandName(['-h']), undefined);
  t.is(commandName([]), undefined);
});

test('the command table loads the named command only, and every command for none or an unknown one', (t) => {
  t.deepEqual(
    commandModules(['status', 'hello-web']).map((module) => module.names),
    [['apps', 'status']],
  );
  t.is(commandModules(['--help']), COMMAND_MODULES);
  t.is(commandModules(['nonsense']), COMMAND_MODULES);
});
