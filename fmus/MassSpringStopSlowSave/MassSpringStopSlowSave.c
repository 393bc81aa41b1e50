/* MassSpringStopSlowSave: MassSpringStop's equations (common/mass_spring_stop.h);
   its FMU state costs state_save_cost (model.toml) to save (see
   MassSpringStopSlowSave.mo). */
#include "mass_spring_stop.h"
