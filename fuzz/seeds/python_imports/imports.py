import numpy as np
from pandas import DataFrame
import os.path, json as j
