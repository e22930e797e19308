/**
 * Entry point of the release artifact's bundle (the `svc` single executable): the same program as
 * bin/svc.js runs from a checkout.
 */
import { main } from '../../cli/main.js';

void main(process.argv);
