import forge
import scipy.stats

forge.result(scipy.stats.norm.cdf(0))
