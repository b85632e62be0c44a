import Rill
