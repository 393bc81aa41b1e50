/* MassSpringStop: the plant of the coupled example (see MassSpringStop.mo); its
 * equations are common/mass_spring_stop.h, shared with MassSpringStopSlowSave. */
#include "mass_spring_stop.h"
